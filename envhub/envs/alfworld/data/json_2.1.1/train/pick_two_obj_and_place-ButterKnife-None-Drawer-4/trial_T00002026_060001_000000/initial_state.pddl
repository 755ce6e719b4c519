
(define (problem plan_trial_T00002026_060001_000000)
    (:domain alfred)
    (:objects
        agent1 - agent
        ButterKnife_bar__plus_00_dot_34_bar__plus_01_dot_08_bar__plus_01_dot_66 - object
        ButterKnife_bar__plus_00_dot_60_bar__plus_01_dot_21_bar__plus_02_dot_22 - object
        SoapBottle_bar__plus_01_dot_79_bar__plus_00_dot_65_bar__minus_01_dot_71 - object
        Spoon_bar__plus_01_dot_13_bar__plus_01_dot_56_bar__plus_01_dot_06 - object
        Pan_bar__minus_01_dot_21_bar__plus_00_dot_85_bar__minus_02_dot_81 - object
        PepperShaker_bar__plus_02_dot_56_bar__plus_00_dot_69_bar__plus_00_dot_32 - object
        Egg_bar__minus_01_dot_65_bar__plus_00_dot_97_bar__plus_01_dot_01 - object
        Bread_bar__minus_00_dot_04_bar__plus_00_dot_03_bar__plus_01_dot_34 - object
        Fork_bar__minus_02_dot_92_bar__plus_01_dot_51_bar__plus_02_dot_48 - object
        DishSponge_bar__minus_02_dot_49_bar__plus_00_dot_24_bar__minus_02_dot_86 - object
        BreadType - otype
        ButterKnifeType - otype
        DishSpongeType - otype
        EggType - otype
        ForkType - otype
        PanType - otype
        PepperShakerType - otype
        SoapBottleType - otype
        SpoonType - otype
        CabinetType - rtype
        CounterTopType - rtype
        DiningTableType - rtype
        DrawerType - rtype
        FridgeType - rtype
        MicrowaveType - rtype
        SinkBasinType - rtype
        Cabinet_bar__minus_01_dot_00_bar__plus_00_dot_39_bar__plus_00_dot_73 - receptacle
        Cabinet_bar__minus_01_dot_73_bar__plus_00_dot_39_bar__plus_00_dot_73 - receptacle
        CounterTop_bar__minus_00_dot_52_bar__plus_01_dot_16_bar__plus_00_dot_49 - receptacle
        CounterTop_bar__minus_02_dot_28_bar__plus_01_dot_16_bar__plus_00_dot_38 - receptacle
        CounterTop_bar__minus_03_dot_86_bar__plus_01_dot_16_bar__plus_00_dot_38 - receptacle
        DiningTable_bar__minus_00_dot_62_bar__plus_00_dot_02_bar__plus_02_dot_49 - receptacle
        Drawer_bar__minus_02_dot_04_bar__plus_00_dot_22_bar__plus_00_dot_59 - receptacle
        Drawer_bar__minus_02_dot_04_bar__plus_00_dot_61_bar__plus_00_dot_59 - receptacle
        Drawer_bar__minus_02_dot_04_bar__plus_00_dot_94_bar__plus_00_dot_60 - receptacle
        Drawer_bar__minus_02_dot_50_bar__plus_00_dot_22_bar__plus_00_dot_59 - receptacle
        Drawer_bar__minus_02_dot_50_bar__plus_00_dot_61_bar__plus_00_dot_59 - receptacle
        Drawer_bar__minus_02_dot_51_bar__plus_00_dot_94_bar__plus_00_dot_60 - receptacle
        Fridge_bar__minus_03_dot_52_bar__plus_00_dot_00_bar__plus_02_dot_72 - receptacle
        Microwave_bar__minus_00_dot_37_bar__plus_01_dot_11_bar__plus_00_dot_43 - receptacle
        Sink_bar__minus_01_dot_39_bar__plus_00_dot_98_bar__plus_00_dot_44_bar_SinkBasin - receptacle
        loc_bar_0_bar_0_bar_0_bar_30 - location
        loc_bar__minus_10_bar_11_bar_3_bar_30 - location
        loc_bar__minus_13_bar_6_bar_2_bar_30 - location
        loc_bar__minus_4_bar_4_bar_2_bar_30 - location
        loc_bar__minus_4_bar_4_bar_3_bar_30 - location
        loc_bar__minus_4_bar_5_bar_2_bar_30 - location
        loc_bar__minus_5_bar_4_bar_3_bar_30 - location
        loc_bar__minus_5_bar_9_bar_1_bar_30 - location
        loc_bar__minus_6_bar_4_bar_1_bar_30 - location
        loc_bar__minus_6_bar_4_bar_3_bar_30 - location
        loc_bar__minus_7_bar_4_bar_2_bar_30 - location
        loc_bar__minus_7_bar_4_bar_3_bar_30 - location
        loc_bar__minus_7_bar_7_bar_2_bar_30 - location
        loc_bar__minus_8_bar_4_bar_3_bar_30 - location
        )
    (:init
        (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_30)
        (receptacleType Cabinet_bar__minus_01_dot_00_bar__plus_00_dot_39_bar__plus_00_dot_73 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_00_bar__plus_00_dot_39_bar__plus_00_dot_73 loc_bar__minus_7_bar_7_bar_2_bar_30)
        (openable Cabinet_bar__minus_01_dot_00_bar__plus_00_dot_39_bar__plus_00_dot_73)
        (receptacleType Cabinet_bar__minus_01_dot_73_bar__plus_00_dot_39_bar__plus_00_dot_73 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_73_bar__plus_00_dot_39_bar__plus_00_dot_73 loc_bar__minus_7_bar_7_bar_2_bar_30)
        (openable Cabinet_bar__minus_01_dot_73_bar__plus_00_dot_39_bar__plus_00_dot_73)
        (receptacleType CounterTop_bar__minus_00_dot_52_bar__plus_01_dot_16_bar__plus_00_dot_49 CounterTopType)
        (receptacleAtLocation CounterTop_bar__minus_00_dot_52_bar__plus_01_dot_16_bar__plus_00_dot_49 loc_bar__minus_4_bar_4_bar_2_bar_30)
        (receptacleType CounterTop_bar__minus_02_dot_28_bar__plus_01_dot_16_bar__plus_00_dot_38 CounterTopType)
        (receptacleAtLocation CounterTop_bar__minus_02_dot_28_bar__plus_01_dot_16_bar__plus_00_dot_38 loc_bar__minus_7_bar_4_bar_2_bar_30)
        (receptacleType CounterTop_bar__minus_03_dot_86_bar__plus_01_dot_16_bar__plus_00_dot_38 CounterTopType)
        (receptacleAtLocation CounterTop_bar__minus_03_dot_86_bar__plus_01_dot_16_bar__plus_00_dot_38 loc_bar__minus_13_bar_6_bar_2_bar_30)
        (receptacleType DiningTable_bar__minus_00_dot_62_bar__plus_00_dot_02_bar__plus_02_dot_49 DiningTableType)
        (receptacleAtLocation DiningTable_bar__minus_00_dot_62_bar__plus_00_dot_02_bar__plus_02_dot_49 loc_bar__minus_5_bar_9_bar_1_bar_30)
        (receptacleType Drawer_bar__minus_02_dot_04_bar__plus_00_dot_22_bar__plus_00_dot_59 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_04_bar__plus_00_dot_22_bar__plus_00_dot_59 loc_bar__minus_4_bar_4_bar_3_bar_30)
        (openable Drawer_bar__minus_02_dot_04_bar__plus_00_dot_22_bar__plus_00_dot_59)
        (receptacleType Drawer_bar__minus_02_dot_04_bar__plus_00_dot_61_bar__plus_00_dot_59 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_04_bar__plus_00_dot_61_bar__plus_00_dot_59 loc_bar__minus_5_bar_4_bar_3_bar_30)
        (openable Drawer_bar__minus_02_dot_04_bar__plus_00_dot_61_bar__plus_00_dot_59)
        (receptacleType Drawer_bar__minus_02_dot_04_bar__plus_00_dot_94_bar__plus_00_dot_60 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_04_bar__plus_00_dot_94_bar__plus_00_dot_60 loc_bar__minus_6_bar_4_bar_3_bar_30)
        (openable Drawer_bar__minus_02_dot_04_bar__plus_00_dot_94_bar__plus_00_dot_60)
        (receptacleType Drawer_bar__minus_02_dot_50_bar__plus_00_dot_22_bar__plus_00_dot_59 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_50_bar__plus_00_dot_22_bar__plus_00_dot_59 loc_bar__minus_6_bar_4_bar_3_bar_30)
        (openable Drawer_bar__minus_02_dot_50_bar__plus_00_dot_22_bar__plus_00_dot_59)
        (receptacleType Drawer_bar__minus_02_dot_50_bar__plus_00_dot_61_bar__plus_00_dot_59 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_50_bar__plus_00_dot_61_bar__plus_00_dot_59 loc_bar__minus_7_bar_4_bar_3_bar_30)
        (openable Drawer_bar__minus_02_dot_50_bar__plus_00_dot_61_bar__plus_00_dot_59)
        (receptacleType Drawer_bar__minus_02_dot_51_bar__plus_00_dot_94_bar__plus_00_dot_60 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_51_bar__plus_00_dot_94_bar__plus_00_dot_60 loc_bar__minus_8_bar_4_bar_3_bar_30)
        (openable Drawer_bar__minus_02_dot_51_bar__plus_00_dot_94_bar__plus_00_dot_60)
        (receptacleType Fridge_bar__minus_03_dot_52_bar__plus_00_dot_00_bar__plus_02_dot_72 FridgeType)
        (receptacleAtLocation Fridge_bar__minus_03_dot_52_bar__plus_00_dot_00_bar__plus_02_dot_72 loc_bar__minus_10_bar_11_bar_3_bar_30)
        (openable Fridge_bar__minus_03_dot_52_bar__plus_00_dot_00_bar__plus_02_dot_72)
        (receptacleType Microwave_bar__minus_00_dot_37_bar__plus_01_dot_11_bar__plus_00_dot_43 MicrowaveType)
        (receptacleAtLocation Microwave_bar__minus_00_dot_37_bar__plus_01_dot_11_bar__plus_00_dot_43 loc_bar__minus_6_bar_4_bar_1_bar_30)
        (openable Microwave_bar__minus_00_dot_37_bar__plus_01_dot_11_bar__plus_00_dot_43)
        (receptacleType Sink_bar__minus_01_dot_39_bar__plus_00_dot_98_bar__plus_00_dot_44_bar_SinkBasin SinkBasinType)
        (receptacleAtLocation Sink_bar__minus_01_dot_39_bar__plus_00_dot_98_bar__plus_00_dot_44_bar_SinkBasin loc_bar__minus_4_bar_5_bar_2_bar_30)
        (canContain CabinetType DishSpongeType)
        (canContain CabinetType PanType)
        (canContain CabinetType PepperShakerType)
        (canContain CabinetType SoapBottleType)
        (canContain CounterTopType BreadType)
        (canContain CounterTopType ButterKnifeType)
        (canContain CounterTopType DishSpongeType)
        (canContain CounterTopType EggType)
        (canContain CounterTopType ForkType)
        (canContain CounterTopType PanType)
        (canContain CounterTopType PepperShakerType)
        (canContain CounterTopType SoapBottleType)
        (canContain CounterTopType SpoonType)
        (canContain DiningTableType BreadType)
        (canContain DiningTableType ButterKnifeType)
        (canContain DiningTableType DishSpongeType)
        (canContain DiningTableType EggType)
        (canContain DiningTableType ForkType)
        (canContain DiningTableType PanType)
        (canContain DiningTableType PepperShakerType)
        (canContain DiningTableType SoapBottleType)
        (canContain DiningTableType SpoonType)
        (canContain DrawerType ButterKnifeType)
        (canContain DrawerType DishSpongeType)
        (canContain DrawerType ForkType)
        (canContain DrawerType PepperShakerType)
        (canContain DrawerType SoapBottleType)
        (canContain DrawerType SpoonType)
        (canContain FridgeType BreadType)
        (canContain FridgeType EggType)
        (canContain FridgeType PanType)
        (canContain MicrowaveType BreadType)
        (canContain MicrowaveType EggType)
        (canContain SinkBasinType ButterKnifeType)
        (canContain SinkBasinType DishSpongeType)
        (canContain SinkBasinType EggType)
        (canContain SinkBasinType ForkType)
        (canContain SinkBasinType PanType)
        (canContain SinkBasinType SpoonType)
        (objectType ButterKnife_bar__plus_00_dot_34_bar__plus_01_dot_08_bar__plus_01_dot_66 ButterKnifeType)
        (inReceptacle ButterKnife_bar__plus_00_dot_34_bar__plus_01_dot_08_bar__plus_01_dot_66 CounterTop_bar__minus_03_dot_86_bar__plus_01_dot_16_bar__plus_00_dot_38)
        (objectAtLocation ButterKnife_bar__plus_00_dot_34_bar__plus_01_dot_08_bar__plus_01_dot_66 loc_bar__minus_13_bar_6_bar_2_bar_30)
        (pickupable ButterKnife_bar__plus_00_dot_34_bar__plus_01_dot_08_bar__plus_01_dot_66)
        (cleanable ButterKnife_bar__plus_00_dot_34_bar__plus_01_dot_08_bar__plus_01_dot_66)
        (objectType ButterKnife_bar__plus_00_dot_60_bar__plus_01_dot_21_bar__plus_02_dot_22 ButterKnifeType)
        (inReceptacle ButterKnife_bar__plus_00_dot_60_bar__plus_01_dot_21_bar__plus_02_dot_22 CounterTop_bar__minus_02_dot_28_bar__plus_01_dot_16_bar__plus_00_dot_38)
        (objectAtLocation ButterKnife_bar__plus_00_dot_60_bar__plus_01_dot_21_bar__plus_02_dot_22 loc_bar__minus_7_bar_4_bar_2_bar_30)
        (pickupable ButterKnife_bar__plus_00_dot_60_bar__plus_01_dot_21_bar__plus_02_dot_22)
        (cleanable ButterKnife_bar__plus_00_dot_60_bar__plus_01_dot_21_bar__plus_02_dot_22)
        (objectType SoapBottle_bar__plus_01_dot_79_bar__plus_00_dot_65_bar__minus_01_dot_71 SoapBottleType)
        (inReceptacle SoapBottle_bar__plus_01_dot_79_bar__plus_00_dot_65_bar__minus_01_dot_71 Cabinet_bar__minus_01_dot_73_bar__plus_00_dot_39_bar__plus_00_dot_73)
        (objectAtLocation SoapBottle_bar__plus_01_dot_79_bar__plus_00_dot_65_bar__minus_01_dot_71 loc_bar__minus_7_bar_7_bar_2_bar_30)
        (pickupable SoapBottle_bar__plus_01_dot_79_bar__plus_00_dot_65_bar__minus_01_dot_71)
        (objectType Spoon_bar__plus_01_dot_13_bar__plus_01_dot_56_bar__plus_01_dot_06 SpoonType)
        (inReceptacle Spoon_bar__plus_01_dot_13_bar__plus_01_dot_56_bar__plus_01_dot_06 Drawer_bar__minus_02_dot_50_bar__plus_00_dot_61_bar__plus_00_dot_59)
        (objectAtLocation Spoon_bar__plus_01_dot_13_bar__plus_01_dot_56_bar__plus_01_dot_06 loc_bar__minus_7_bar_4_bar_3_bar_30)
        (pickupable Spoon_bar__plus_01_dot_13_bar__plus_01_dot_56_bar__plus_01_dot_06)
        (cleanable Spoon_bar__plus_01_dot_13_bar__plus_01_dot_56_bar__plus_01_dot_06)
        (objectType Pan_bar__minus_01_dot_21_bar__plus_00_dot_85_bar__minus_02_dot_81 PanType)
        (inReceptacle Pan_bar__minus_01_dot_21_bar__plus_00_dot_85_bar__minus_02_dot_81 Sink_bar__minus_01_dot_39_bar__plus_00_dot_98_bar__plus_00_dot_44_bar_SinkBasin)
        (objectAtLocation Pan_bar__minus_01_dot_21_bar__plus_00_dot_85_bar__minus_02_dot_81 loc_bar__minus_4_bar_5_bar_2_bar_30)
        (pickupable Pan_bar__minus_01_dot_21_bar__plus_00_dot_85_bar__minus_02_dot_81)
        (isReceptacleObject Pan_bar__minus_01_dot_21_bar__plus_00_dot_85_bar__minus_02_dot_81)
        (cleanable Pan_bar__minus_01_dot_21_bar__plus_00_dot_85_bar__minus_02_dot_81)
        (coolable Pan_bar__minus_01_dot_21_bar__plus_00_dot_85_bar__minus_02_dot_81)
        (objectType PepperShaker_bar__plus_02_dot_56_bar__plus_00_dot_69_bar__plus_00_dot_32 PepperShakerType)
        (inReceptacle PepperShaker_bar__plus_02_dot_56_bar__plus_00_dot_69_bar__plus_00_dot_32 CounterTop_bar__minus_02_dot_28_bar__plus_01_dot_16_bar__plus_00_dot_38)
        (objectAtLocation PepperShaker_bar__plus_02_dot_56_bar__plus_00_dot_69_bar__plus_00_dot_32 loc_bar__minus_7_bar_4_bar_2_bar_30)
        (pickupable PepperShaker_bar__plus_02_dot_56_bar__plus_00_dot_69_bar__plus_00_dot_32)
        (objectType Egg_bar__minus_01_dot_65_bar__plus_00_dot_97_bar__plus_01_dot_01 EggType)
        (inReceptacle Egg_bar__minus_01_dot_65_bar__plus_00_dot_97_bar__plus_01_dot_01 Sink_bar__minus_01_dot_39_bar__plus_00_dot_98_bar__plus_00_dot_44_bar_SinkBasin)
        (objectAtLocation Egg_bar__minus_01_dot_65_bar__plus_00_dot_97_bar__plus_01_dot_01 loc_bar__minus_4_bar_5_bar_2_bar_30)
        (pickupable Egg_bar__minus_01_dot_65_bar__plus_00_dot_97_bar__plus_01_dot_01)
        (cleanable Egg_bar__minus_01_dot_65_bar__plus_00_dot_97_bar__plus_01_dot_01)
        (heatable Egg_bar__minus_01_dot_65_bar__plus_00_dot_97_bar__plus_01_dot_01)
        (coolable Egg_bar__minus_01_dot_65_bar__plus_00_dot_97_bar__plus_01_dot_01)
        (sliceable Egg_bar__minus_01_dot_65_bar__plus_00_dot_97_bar__plus_01_dot_01)
        (objectType Bread_bar__minus_00_dot_04_bar__plus_00_dot_03_bar__plus_01_dot_34 BreadType)
        (inReceptacle Bread_bar__minus_00_dot_04_bar__plus_00_dot_03_bar__plus_01_dot_34 CounterTop_bar__minus_02_dot_28_bar__plus_01_dot_16_bar__plus_00_dot_38)
        (objectAtLocation Bread_bar__minus_00_dot_04_bar__plus_00_dot_03_bar__plus_01_dot_34 loc_bar__minus_7_bar_4_bar_2_bar_30)
        (pickupable Bread_bar__minus_00_dot_04_bar__plus_00_dot_03_bar__plus_01_dot_34)
        (heatable Bread_bar__minus_00_dot_04_bar__plus_00_dot_03_bar__plus_01_dot_34)
        (coolable Bread_bar__minus_00_dot_04_bar__plus_00_dot_03_bar__plus_01_dot_34)
        (sliceable Bread_bar__minus_00_dot_04_bar__plus_00_dot_03_bar__plus_01_dot_34)
        (objectType Fork_bar__minus_02_dot_92_bar__plus_01_dot_51_bar__plus_02_dot_48 ForkType)
        (inReceptacle Fork_bar__minus_02_dot_92_bar__plus_01_dot_51_bar__plus_02_dot_48 DiningTable_bar__minus_00_dot_62_bar__plus_00_dot_02_bar__plus_02_dot_49)
        (objectAtLocation Fork_bar__minus_02_dot_92_bar__plus_01_dot_51_bar__plus_02_dot_48 loc_bar__minus_5_bar_9_bar_1_bar_30)
        (pickupable Fork_bar__minus_02_dot_92_bar__plus_01_dot_51_bar__plus_02_dot_48)
        (cleanable Fork_bar__minus_02_dot_92_bar__plus_01_dot_51_bar__plus_02_dot_48)
        (objectType DishSponge_bar__minus_02_dot_49_bar__plus_00_dot_24_bar__minus_02_dot_86 DishSpongeType)
        (inReceptacle DishSponge_bar__minus_02_dot_49_bar__plus_00_dot_24_bar__minus_02_dot_86 Sink_bar__minus_01_dot_39_bar__plus_00_dot_98_bar__plus_00_dot_44_bar_SinkBasin)
        (objectAtLocation DishSponge_bar__minus_02_dot_49_bar__plus_00_dot_24_bar__minus_02_dot_86 loc_bar__minus_4_bar_5_bar_2_bar_30)
        (pickupable DishSponge_bar__minus_02_dot_49_bar__plus_00_dot_24_bar__minus_02_dot_86)
        (cleanable DishSponge_bar__minus_02_dot_49_bar__plus_00_dot_24_bar__minus_02_dot_86)
        )

                (:goal
                    (and
                        (exists (?r - receptacle)
                            (exists (?o1 - object)
                                (and
                                    (objectType ?o1 ButterKnifeType)
                                    (receptacleType ?r DrawerType)
                                    (inReceptacle ?o1 ?r)
                                    (exists (?o2 - object)
                                        (and
                                            (not (= ?o1 ?o2))
                                            (objectType ?o2 ButterKnifeType)
                                            (receptacleType ?r DrawerType)
                                            (inReceptacle ?o2 ?r)
                                        )
                                    )
                                )
                            )
                        )
                    )
                )
            )
            
