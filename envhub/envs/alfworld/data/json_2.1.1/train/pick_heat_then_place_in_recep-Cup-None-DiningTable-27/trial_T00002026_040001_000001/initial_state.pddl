
(define (problem plan_trial_T00002026_040001_000001)
    (:domain alfred)
    (:objects
        agent1 - agent
        Cup_bar__plus_01_dot_12_bar__plus_01_dot_50_bar__minus_02_dot_44 - object
        Potato_bar__minus_01_dot_11_bar__plus_01_dot_37_bar__minus_00_dot_75 - object
        Lettuce_bar__plus_00_dot_29_bar__plus_01_dot_00_bar__minus_00_dot_57 - object
        Knife_bar__plus_02_dot_49_bar__plus_00_dot_80_bar__minus_00_dot_00 - object
        Plate_bar__minus_01_dot_68_bar__plus_01_dot_33_bar__plus_00_dot_80 - object
        SaltShaker_bar__minus_02_dot_96_bar__plus_00_dot_97_bar__minus_02_dot_47 - object
        Egg_bar__plus_01_dot_56_bar__plus_01_dot_50_bar__plus_02_dot_62 - object
        Apple_bar__plus_02_dot_48_bar__plus_00_dot_89_bar__minus_01_dot_77 - object
        Bread_bar__plus_01_dot_33_bar__plus_00_dot_83_bar__minus_01_dot_81 - object
        AppleType - otype
        BreadType - otype
        CupType - otype
        EggType - otype
        KnifeType - otype
        LettuceType - otype
        PlateType - otype
        PotatoType - otype
        SaltShakerType - otype
        CabinetType - rtype
        CounterTopType - rtype
        DiningTableType - rtype
        DrawerType - rtype
        FridgeType - rtype
        GarbageCanType - rtype
        MicrowaveType - rtype
        SinkBasinType - rtype
        Cabinet_bar__plus_00_dot_13_bar__plus_00_dot_39_bar__plus_01_dot_77 - receptacle
        Cabinet_bar__plus_00_dot_35_bar__plus_00_dot_39_bar__plus_02_dot_36 - receptacle
        Cabinet_bar__plus_01_dot_51_bar__plus_00_dot_39_bar__plus_02_dot_36 - receptacle
        Cabinet_bar__plus_01_dot_76_bar__plus_00_dot_39_bar__plus_00_dot_87 - receptacle
        Cabinet_bar__plus_01_dot_76_bar__plus_00_dot_39_bar__plus_02_dot_35 - receptacle
        Cabinet_bar__plus_02_dot_04_bar__plus_01_dot_81_bar__plus_00_dot_28 - receptacle
        Cabinet_bar__plus_02_dot_04_bar__plus_01_dot_81_bar__plus_00_dot_87 - receptacle
        Cabinet_bar__plus_02_dot_04_bar__plus_02_dot_11_bar__plus_00_dot_89 - receptacle
        Cabinet_bar__plus_02_dot_04_bar__plus_02_dot_11_bar__plus_01_dot_77 - receptacle
        CounterTop_bar__plus_01_dot_07_bar__plus_00_dot_97_bar__plus_02_dot_67 - receptacle
        CounterTop_bar__plus_02_dot_06_bar__plus_00_dot_97_bar__plus_00_dot_58 - receptacle
        DiningTable_bar__minus_00_dot_21_bar__plus_00_dot_02_bar__plus_00_dot_88 - receptacle
        Drawer_bar__plus_01_dot_91_bar__plus_00_dot_77_bar__plus_02_dot_06 - receptacle
        Drawer_bar__plus_02_dot_17_bar__plus_00_dot_77_bar__plus_00_dot_58 - receptacle
        Drawer_bar__minus_00_dot_02_bar__plus_00_dot_77_bar__plus_02_dot_06 - receptacle
        Fridge_bar__plus_02_dot_10_bar__plus_00_dot_00_bar__minus_00_dot_28 - receptacle
        GarbageCan_bar__minus_00_dot_33_bar__plus_00_dot_00_bar__minus_00_dot_80 - receptacle
        Microwave_bar__minus_00_dot_31_bar__plus_00_dot_93_bar__plus_02_dot_08 - receptacle
        Sink_bar__plus_00_dot_94_bar__plus_00_dot_94_bar__plus_02_dot_65_bar_SinkBasin - receptacle
        loc_bar_0_bar_0_bar_0_bar_30 - location
        loc_bar_2_bar_3_bar_3_bar_30 - location
        loc_bar_2_bar_8_bar_3_bar_30 - location
        loc_bar_3_bar_4_bar_1_bar_30 - location
        loc_bar_3_bar_5_bar_1_bar_0 - location
        loc_bar_3_bar_6_bar_0_bar_30 - location
        loc_bar_3_bar_6_bar_1_bar_0 - location
        loc_bar_3_bar_6_bar_1_bar_30 - location
        loc_bar_3_bar_8_bar_3_bar_30 - location
        loc_bar_3_bar__minus_1_bar_3_bar_30 - location
        loc_bar_4_bar_3_bar_1_bar_30 - location
        loc_bar_4_bar_6_bar_0_bar_30 - location
        loc_bar_4_bar_7_bar_3_bar_30 - location
        loc_bar_4_bar_8_bar_0_bar_30 - location
        loc_bar_4_bar_8_bar_1_bar_30 - location
        loc_bar_5_bar_1_bar_1_bar_0 - location
        loc_bar_5_bar_2_bar_1_bar_0 - location
        loc_bar_5_bar_2_bar_1_bar_30 - location
        loc_bar_5_bar_7_bar_1_bar_30 - location
        loc_bar_5_bar__minus_1_bar_1_bar_30 - location
        )
    (:init
        (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_30)
        (receptacleType Cabinet_bar__plus_00_dot_13_bar__plus_00_dot_39_bar__plus_01_dot_77 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_13_bar__plus_00_dot_39_bar__plus_01_dot_77 loc_bar_4_bar_7_bar_3_bar_30)
        (openable Cabinet_bar__plus_00_dot_13_bar__plus_00_dot_39_bar__plus_01_dot_77)
        (receptacleType Cabinet_bar__plus_00_dot_35_bar__plus_00_dot_39_bar__plus_02_dot_36 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_35_bar__plus_00_dot_39_bar__plus_02_dot_36 loc_bar_4_bar_6_bar_0_bar_30)
        (openable Cabinet_bar__plus_00_dot_35_bar__plus_00_dot_39_bar__plus_02_dot_36)
        (receptacleType Cabinet_bar__plus_01_dot_51_bar__plus_00_dot_39_bar__plus_02_dot_36 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_01_dot_51_bar__plus_00_dot_39_bar__plus_02_dot_36 loc_bar_3_bar_6_bar_0_bar_30)
        (openable Cabinet_bar__plus_01_dot_51_bar__plus_00_dot_39_bar__plus_02_dot_36)
        (receptacleType Cabinet_bar__plus_01_dot_76_bar__plus_00_dot_39_bar__plus_00_dot_87 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_01_dot_76_bar__plus_00_dot_39_bar__plus_00_dot_87 loc_bar_3_bar_4_bar_1_bar_30)
        (openable Cabinet_bar__plus_01_dot_76_bar__plus_00_dot_39_bar__plus_00_dot_87)
        (receptacleType Cabinet_bar__plus_01_dot_76_bar__plus_00_dot_39_bar__plus_02_dot_35 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_01_dot_76_bar__plus_00_dot_39_bar__plus_02_dot_35 loc_bar_3_bar_6_bar_1_bar_30)
        (openable Cabinet_bar__plus_01_dot_76_bar__plus_00_dot_39_bar__plus_02_dot_35)
        (receptacleType Cabinet_bar__plus_02_dot_04_bar__plus_01_dot_81_bar__plus_00_dot_28 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_02_dot_04_bar__plus_01_dot_81_bar__plus_00_dot_28 loc_bar_5_bar_1_bar_1_bar_0)
        (openable Cabinet_bar__plus_02_dot_04_bar__plus_01_dot_81_bar__plus_00_dot_28)
        (receptacleType Cabinet_bar__plus_02_dot_04_bar__plus_01_dot_81_bar__plus_00_dot_87 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_02_dot_04_bar__plus_01_dot_81_bar__plus_00_dot_87 loc_bar_5_bar_2_bar_1_bar_0)
        (openable Cabinet_bar__plus_02_dot_04_bar__plus_01_dot_81_bar__plus_00_dot_87)
        (receptacleType Cabinet_bar__plus_02_dot_04_bar__plus_02_dot_11_bar__plus_00_dot_89 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_02_dot_04_bar__plus_02_dot_11_bar__plus_00_dot_89 loc_bar_3_bar_6_bar_1_bar_0)
        (openable Cabinet_bar__plus_02_dot_04_bar__plus_02_dot_11_bar__plus_00_dot_89)
        (receptacleType Cabinet_bar__plus_02_dot_04_bar__plus_02_dot_11_bar__plus_01_dot_77 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_02_dot_04_bar__plus_02_dot_11_bar__plus_01_dot_77 loc_bar_3_bar_5_bar_1_bar_0)
        (openable Cabinet_bar__plus_02_dot_04_bar__plus_02_dot_11_bar__plus_01_dot_77)
        (receptacleType CounterTop_bar__plus_01_dot_07_bar__plus_00_dot_97_bar__plus_02_dot_67 CounterTopType)
        (receptacleAtLocation CounterTop_bar__plus_01_dot_07_bar__plus_00_dot_97_bar__plus_02_dot_67 loc_bar_5_bar_7_bar_1_bar_30)
        (receptacleType CounterTop_bar__plus_02_dot_06_bar__plus_00_dot_97_bar__plus_00_dot_58 CounterTopType)
        (receptacleAtLocation CounterTop_bar__plus_02_dot_06_bar__plus_00_dot_97_bar__plus_00_dot_58 loc_bar_5_bar_2_bar_1_bar_30)
        (receptacleType DiningTable_bar__minus_00_dot_21_bar__plus_00_dot_02_bar__plus_00_dot_88 DiningTableType)
        (receptacleAtLocation DiningTable_bar__minus_00_dot_21_bar__plus_00_dot_02_bar__plus_00_dot_88 loc_bar_2_bar_3_bar_3_bar_30)
        (receptacleType Drawer_bar__plus_01_dot_91_bar__plus_00_dot_77_bar__plus_02_dot_06 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_01_dot_91_bar__plus_00_dot_77_bar__plus_02_dot_06 loc_bar_4_bar_8_bar_1_bar_30)
        (openable Drawer_bar__plus_01_dot_91_bar__plus_00_dot_77_bar__plus_02_dot_06)
        (receptacleType Drawer_bar__plus_02_dot_17_bar__plus_00_dot_77_bar__plus_00_dot_58 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_02_dot_17_bar__plus_00_dot_77_bar__plus_00_dot_58 loc_bar_4_bar_3_bar_1_bar_30)
        (openable Drawer_bar__plus_02_dot_17_bar__plus_00_dot_77_bar__plus_00_dot_58)
        (receptacleType Drawer_bar__minus_00_dot_02_bar__plus_00_dot_77_bar__plus_02_dot_06 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_00_dot_02_bar__plus_00_dot_77_bar__plus_02_dot_06 loc_bar_3_bar_8_bar_3_bar_30)
        (openable Drawer_bar__minus_00_dot_02_bar__plus_00_dot_77_bar__plus_02_dot_06)
        (receptacleType Fridge_bar__plus_02_dot_10_bar__plus_00_dot_00_bar__minus_00_dot_28 FridgeType)
        (receptacleAtLocation Fridge_bar__plus_02_dot_10_bar__plus_00_dot_00_bar__minus_00_dot_28 loc_bar_5_bar__minus_1_bar_1_bar_30)
        (openable Fridge_bar__plus_02_dot_10_bar__plus_00_dot_00_bar__minus_00_dot_28)
        (receptacleType GarbageCan_bar__minus_00_dot_33_bar__plus_00_dot_00_bar__minus_00_dot_80 GarbageCanType)
        (receptacleAtLocation GarbageCan_bar__minus_00_dot_33_bar__plus_00_dot_00_bar__minus_00_dot_80 loc_bar_3_bar__minus_1_bar_3_bar_30)
        (receptacleType Microwave_bar__minus_00_dot_31_bar__plus_00_dot_93_bar__plus_02_dot_08 MicrowaveType)
        (receptacleAtLocation Microwave_bar__minus_00_dot_31_bar__plus_00_dot_93_bar__plus_02_dot_08 loc_bar_2_bar_8_bar_3_bar_30)
        (openable Microwave_bar__minus_00_dot_31_bar__plus_00_dot_93_bar__plus_02_dot_08)
        (receptacleType Sink_bar__plus_00_dot_94_bar__plus_00_dot_94_bar__plus_02_dot_65_bar_SinkBasin SinkBasinType)
        (receptacleAtLocation Sink_bar__plus_00_dot_94_bar__plus_00_dot_94_bar__plus_02_dot_65_bar_SinkBasin loc_bar_4_bar_8_bar_0_bar_30)
        (canContain CabinetType CupType)
        (canContain CabinetType PlateType)
        (canContain CabinetType SaltShakerType)
        (canContain CounterTopType AppleType)
        (canContain CounterTopType BreadType)
        (canContain CounterTopType CupType)
        (canContain CounterTopType EggType)
        (canContain CounterTopType KnifeType)
        (canContain CounterTopType LettuceType)
        (canContain CounterTopType PlateType)
        (canContain CounterTopType PotatoType)
        (canContain CounterTopType SaltShakerType)
        (canContain DiningTableType AppleType)
        (canContain DiningTableType BreadType)
        (canContain DiningTableType CupType)
        (canContain DiningTableType EggType)
        (canContain DiningTableType KnifeType)
        (canContain DiningTableType LettuceType)
        (canContain DiningTableType PlateType)
        (canContain DiningTableType PotatoType)
        (canContain DiningTableType SaltShakerType)
        (canContain DrawerType KnifeType)
        (canContain DrawerType SaltShakerType)
        (canContain FridgeType AppleType)
        (canContain FridgeType BreadType)
        (canContain FridgeType CupType)
        (canContain FridgeType EggType)
        (canContain FridgeType LettuceType)
        (canContain FridgeType PlateType)
        (canContain FridgeType PotatoType)
        (canContain GarbageCanType AppleType)
        (canContain GarbageCanType BreadType)
        (canContain GarbageCanType EggType)
        (canContain GarbageCanType LettuceType)
        (canContain GarbageCanType PotatoType)
        (canContain MicrowaveType AppleType)
        (canContain MicrowaveType BreadType)
        (canContain MicrowaveType CupType)
        (canContain MicrowaveType EggType)
        (canContain MicrowaveType PlateType)
        (canContain MicrowaveType PotatoType)
        (canContain SinkBasinType AppleType)
        (canContain SinkBasinType CupType)
        (canContain SinkBasinType EggType)
        (canContain SinkBasinType KnifeType)
        (canContain SinkBasinType LettuceType)
        (canContain SinkBasinType PlateType)
        (canContain SinkBasinType PotatoType)
        (objectType Cup_bar__plus_01_dot_12_bar__plus_01_dot_50_bar__minus_02_dot_44 CupType)
        (inReceptacle Cup_bar__plus_01_dot_12_bar__plus_01_dot_50_bar__minus_02_dot_44 Cabinet_bar__plus_02_dot_04_bar__plus_01_dot_81_bar__plus_00_dot_87)
        (objectAtLocation Cup_bar__plus_01_dot_12_bar__plus_01_dot_50_bar__minus_02_dot_44 loc_bar_5_bar_2_bar_1_bar_0)
        (pickupable Cup_bar__plus_01_dot_12_bar__plus_01_dot_50_bar__minus_02_dot_44)
        (isReceptacleObject Cup_bar__plus_01_dot_12_bar__plus_01_dot_50_bar__minus_02_dot_44)
        (cleanable Cup_bar__plus_01_dot_12_bar__plus_01_dot_50_bar__minus_02_dot_44)
        (heatable Cup_bar__plus_01_dot_12_bar__plus_01_dot_50_bar__minus_02_dot_44)
        (coolable Cup_bar__plus_01_dot_12_bar__plus_01_dot_50_bar__minus_02_dot_44)
        (objectType Potato_bar__minus_01_dot_11_bar__plus_01_dot_37_bar__minus_00_dot_75 PotatoType)
        (inReceptacle Potato_bar__minus_01_dot_11_bar__plus_01_dot_37_bar__minus_00_dot_75 Fridge_bar__plus_02_dot_10_bar__plus_00_dot_00_bar__minus_00_dot_28)
        (objectAtLocation Potato_bar__minus_01_dot_11_bar__plus_01_dot_37_bar__minus_00_dot_75 loc_bar_5_bar__minus_1_bar_1_bar_30)
        (pickupable Potato_bar__minus_01_dot_11_bar__plus_01_dot_37_bar__minus_00_dot_75)
        (cleanable Potato_bar__minus_01_dot_11_bar__plus_01_dot_37_bar__minus_00_dot_75)
        (heatable Potato_bar__minus_01_dot_11_bar__plus_01_dot_37_bar__minus_00_dot_75)
        (coolable Potato_bar__minus_01_dot_11_bar__plus_01_dot_37_bar__minus_00_dot_75)
        (sliceable Potato_bar__minus_01_dot_11_bar__plus_01_dot_37_bar__minus_00_dot_75)
        (objectType Lettuce_bar__plus_00_dot_29_bar__plus_01_dot_00_bar__minus_00_dot_57 LettuceType)
        (inReceptacle Lettuce_bar__plus_00_dot_29_bar__plus_01_dot_00_bar__minus_00_dot_57 GarbageCan_bar__minus_00_dot_33_bar__plus_00_dot_00_bar__minus_00_dot_80)
        (objectAtLocation Lettuce_bar__plus_00_dot_29_bar__plus_01_dot_00_bar__minus_00_dot_57 loc_bar_3_bar__minus_1_bar_3_bar_30)
        (pickupable Lettuce_bar__plus_00_dot_29_bar__plus_01_dot_00_bar__minus_00_dot_57)
        (cleanable Lettuce_bar__plus_00_dot_29_bar__plus_01_dot_00_bar__minus_00_dot_57)
        (coolable Lettuce_bar__plus_00_dot_29_bar__plus_01_dot_00_bar__minus_00_dot_57)
        (sliceable Lettuce_bar__plus_00_dot_29_bar__plus_01_dot_00_bar__minus_00_dot_57)
        (objectType Knife_bar__plus_02_dot_49_bar__plus_00_dot_80_bar__minus_00_dot_00 KnifeType)
        (inReceptacle Knife_bar__plus_02_dot_49_bar__plus_00_dot_80_bar__minus_00_dot_00 Drawer_bar__plus_01_dot_91_bar__plus_00_dot_77_bar__plus_02_dot_06)
        (objectAtLocation Knife_bar__plus_02_dot_49_bar__plus_00_dot_80_bar__minus_00_dot_00 loc_bar_4_bar_8_bar_1_bar_30)
        (pickupable Knife_bar__plus_02_dot_49_bar__plus_00_dot_80_bar__minus_00_dot_00)
        (cleanable Knife_bar__plus_02_dot_49_bar__plus_00_dot_80_bar__minus_00_dot_00)
        (objectType Plate_bar__minus_01_dot_68_bar__plus_01_dot_33_bar__plus_00_dot_80 PlateType)
        (inReceptacle Plate_bar__minus_01_dot_68_bar__plus_01_dot_33_bar__plus_00_dot_80 Cabinet_bar__plus_02_dot_04_bar__plus_02_dot_11_bar__plus_00_dot_89)
        (objectAtLocation Plate_bar__minus_01_dot_68_bar__plus_01_dot_33_bar__plus_00_dot_80 loc_bar_3_bar_6_bar_1_bar_0)
        (pickupable Plate_bar__minus_01_dot_68_bar__plus_01_dot_33_bar__plus_00_dot_80)
        (isReceptacleObject Plate_bar__minus_01_dot_68_bar__plus_01_dot_33_bar__plus_00_dot_80)
        (cleanable Plate_bar__minus_01_dot_68_bar__plus_01_dot_33_bar__plus_00_dot_80)
        (heatable Plate_bar__minus_01_dot_68_bar__plus_01_dot_33_bar__plus_00_dot_80)
        (coolable Plate_bar__minus_01_dot_68_bar__plus_01_dot_33_bar__plus_00_dot_80)
        (objectType SaltShaker_bar__minus_02_dot_96_bar__plus_00_dot_97_bar__minus_02_dot_47 SaltShakerType)
        (inReceptacle SaltShaker_bar__minus_02_dot_96_bar__plus_00_dot_97_bar__minus_02_dot_47 Cabinet_bar__plus_02_dot_04_bar__plus_02_dot_11_bar__plus_00_dot_89)
        (objectAtLocation SaltShaker_bar__minus_02_dot_96_bar__plus_00_dot_97_bar__minus_02_dot_47 loc_bar_3_bar_6_bar_1_bar_0)
        (pickupable SaltShaker_bar__minus_02_dot_96_bar__plus_00_dot_97_bar__minus_02_dot_47)
        (objectType Egg_bar__plus_01_dot_56_bar__plus_01_dot_50_bar__plus_02_dot_62 EggType)
        (inReceptacle Egg_bar__plus_01_dot_56_bar__plus_01_dot_50_bar__plus_02_dot_62 CounterTop_bar__plus_01_dot_07_bar__plus_00_dot_97_bar__plus_02_dot_67)
        (objectAtLocation Egg_bar__plus_01_dot_56_bar__plus_01_dot_50_bar__plus_02_dot_62 loc_bar_5_bar_7_bar_1_bar_30)
        (pickupable Egg_bar__plus_01_dot_56_bar__plus_01_dot_50_bar__plus_02_dot_62)
        (cleanable Egg_bar__plus_01_dot_56_bar__plus_01_dot_50_bar__plus_02_dot_62)
        (heatable Egg_bar__plus_01_dot_56_bar__plus_01_dot_50_bar__plus_02_dot_62)
        (coolable Egg_bar__plus_01_dot_56_bar__plus_01_dot_50_bar__plus_02_dot_62)
        (sliceable Egg_bar__plus_01_dot_56_bar__plus_01_dot_50_bar__plus_02_dot_62)
        (objectType Apple_bar__plus_02_dot_48_bar__plus_00_dot_89_bar__minus_01_dot_77 AppleType)
        (inReceptacle Apple_bar__plus_02_dot_48_bar__plus_00_dot_89_bar__minus_01_dot_77 GarbageCan_bar__minus_00_dot_33_bar__plus_00_dot_00_bar__minus_00_dot_80)
        (objectAtLocation Apple_bar__plus_02_dot_48_bar__plus_00_dot_89_bar__minus_01_dot_77 loc_bar_3_bar__minus_1_bar_3_bar_30)
        (pickupable Apple_bar__plus_02_dot_48_bar__plus_00_dot_89_bar__minus_01_dot_77)
        (cleanable Apple_bar__plus_02_dot_48_bar__plus_00_dot_89_bar__minus_01_dot_77)
        (heatable Apple_bar__plus_02_dot_48_bar__plus_00_dot_89_bar__minus_01_dot_77)
        (coolable Apple_bar__plus_02_dot_48_bar__plus_00_dot_89_bar__minus_01_dot_77)
        (sliceable Apple_bar__plus_02_dot_48_bar__plus_00_dot_89_bar__minus_01_dot_77)
        (objectType Bread_bar__plus_01_dot_33_bar__plus_00_dot_83_bar__minus_01_dot_81 BreadType)
        (inReceptacle Bread_bar__plus_01_dot_33_bar__plus_00_dot_83_bar__minus_01_dot_81 Fridge_bar__plus_02_dot_10_bar__plus_00_dot_00_bar__minus_00_dot_28)
        (objectAtLocation Bread_bar__plus_01_dot_33_bar__plus_00_dot_83_bar__minus_01_dot_81 loc_bar_5_bar__minus_1_bar_1_bar_30)
        (pickupable Bread_bar__plus_01_dot_33_bar__plus_00_dot_83_bar__minus_01_dot_81)
        (heatable Bread_bar__plus_01_dot_33_bar__plus_00_dot_83_bar__minus_01_dot_81)
        (coolable Bread_bar__plus_01_dot_33_bar__plus_00_dot_83_bar__minus_01_dot_81)
        (sliceable Bread_bar__plus_01_dot_33_bar__plus_00_dot_83_bar__minus_01_dot_81)
        )

        (:goal
            (and
                (exists (?r - receptacle)
                    (exists (?o - object)
                        (and
                            (heatable ?o)
                            (objectType ?o CupType)
                            (receptacleType ?r DiningTableType)
                            (isHot ?o)
                            (inReceptacle ?o ?r)
                        )
                    )
                )
            )
        )
    )
    
