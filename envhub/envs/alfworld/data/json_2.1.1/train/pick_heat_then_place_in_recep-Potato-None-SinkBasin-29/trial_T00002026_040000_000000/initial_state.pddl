
(define (problem plan_trial_T00002026_040000_000000)
    (:domain alfred)
    (:objects
        agent1 - agent
        Potato_bar__plus_02_dot_99_bar__plus_00_dot_21_bar__minus_02_dot_69 - object
        SoapBottle_bar__minus_02_dot_13_bar__plus_01_dot_01_bar__minus_01_dot_89 - object
        Spoon_bar__plus_00_dot_12_bar__plus_01_dot_52_bar__plus_00_dot_62 - object
        Spatula_bar__plus_00_dot_53_bar__plus_00_dot_04_bar__plus_01_dot_49 - object
        SaltShaker_bar__plus_00_dot_51_bar__plus_01_dot_98_bar__plus_02_dot_76 - object
        Apple_bar__minus_00_dot_57_bar__plus_01_dot_08_bar__plus_00_dot_09 - object
        Mug_bar__plus_02_dot_08_bar__plus_00_dot_69_bar__plus_02_dot_31 - object
        Plate_bar__plus_00_dot_98_bar__plus_01_dot_42_bar__plus_00_dot_29 - object
        Tomato_bar__minus_00_dot_47_bar__plus_00_dot_53_bar__plus_02_dot_85 - object
        AppleType - otype
        MugType - otype
        PlateType - otype
        PotatoType - otype
        SaltShakerType - otype
        SoapBottleType - otype
        SpatulaType - otype
        SpoonType - otype
        TomatoType - otype
        CabinetType - rtype
        CounterTopType - rtype
        FridgeType - rtype
        MicrowaveType - rtype
        SinkBasinType - rtype
        Cabinet_bar__plus_01_dot_34_bar__plus_00_dot_59_bar__minus_01_dot_11 - receptacle
        Cabinet_bar__plus_01_dot_99_bar__plus_00_dot_59_bar__minus_01_dot_11 - receptacle
        Cabinet_bar__plus_01_dot_99_bar__plus_01_dot_40_bar__minus_01_dot_11 - receptacle
        Cabinet_bar__minus_00_dot_85_bar__plus_00_dot_59_bar__minus_01_dot_11 - receptacle
        Cabinet_bar__minus_01_dot_53_bar__plus_00_dot_59_bar__minus_01_dot_11 - receptacle
        Cabinet_bar__minus_01_dot_55_bar__plus_02_dot_00_bar__minus_01_dot_11 - receptacle
        CounterTop_bar__plus_00_dot_20_bar__plus_01_dot_08_bar__minus_01_dot_51 - receptacle
        CounterTop_bar__plus_00_dot_97_bar__plus_01_dot_08_bar__plus_00_dot_42 - receptacle
        Fridge_bar__minus_01_dot_29_bar__plus_00_dot_02_bar__plus_01_dot_83 - receptacle
        Microwave_bar__minus_01_dot_20_bar__plus_01_dot_61_bar__minus_01_dot_28 - receptacle
        Sink_bar__plus_00_dot_93_bar__plus_00_dot_94_bar__plus_00_dot_32_bar_SinkBasin - receptacle
        loc_bar_0_bar_0_bar_0_bar_30 - location
        loc_bar_0_bar_7_bar_3_bar_0 - location
        loc_bar_3_bar__minus_1_bar_2_bar_30 - location
        loc_bar_4_bar__minus_1_bar_0_bar_30 - location
        loc_bar_4_bar__minus_3_bar_2_bar_30 - location
        loc_bar_6_bar__minus_1_bar_2_bar_30 - location
        loc_bar_6_bar__minus_2_bar_2_bar_0 - location
        loc_bar__minus_1_bar__minus_1_bar_2_bar_30 - location
        loc_bar__minus_2_bar_2_bar_1_bar_30 - location
        loc_bar__minus_4_bar_0_bar_2_bar__minus_30 - location
        loc_bar__minus_4_bar__minus_1_bar_2_bar_30 - location
        loc_bar__minus_4_bar__minus_2_bar_2_bar_0 - location
        )
    (:init
        (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_30)
        (receptacleType Cabinet_bar__plus_01_dot_34_bar__plus_00_dot_59_bar__minus_01_dot_11 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_01_dot_34_bar__plus_00_dot_59_bar__minus_01_dot_11 loc_bar_3_bar__minus_1_bar_2_bar_30)
        (openable Cabinet_bar__plus_01_dot_34_bar__plus_00_dot_59_bar__minus_01_dot_11)
        (receptacleType Cabinet_bar__plus_01_dot_99_bar__plus_00_dot_59_bar__minus_01_dot_11 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_01_dot_99_bar__plus_00_dot_59_bar__minus_01_dot_11 loc_bar_6_bar__minus_1_bar_2_bar_30)
        (openable Cabinet_bar__plus_01_dot_99_bar__plus_00_dot_59_bar__minus_01_dot_11)
        (receptacleType Cabinet_bar__plus_01_dot_99_bar__plus_01_dot_40_bar__minus_01_dot_11 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_01_dot_99_bar__plus_01_dot_40_bar__minus_01_dot_11 loc_bar_6_bar__minus_2_bar_2_bar_0)
        (openable Cabinet_bar__plus_01_dot_99_bar__plus_01_dot_40_bar__minus_01_dot_11)
        (receptacleType Cabinet_bar__minus_00_dot_85_bar__plus_00_dot_59_bar__minus_01_dot_11 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_00_dot_85_bar__plus_00_dot_59_bar__minus_01_dot_11 loc_bar__minus_1_bar__minus_1_bar_2_bar_30)
        (openable Cabinet_bar__minus_00_dot_85_bar__plus_00_dot_59_bar__minus_01_dot_11)
        (receptacleType Cabinet_bar__minus_01_dot_53_bar__plus_00_dot_59_bar__minus_01_dot_11 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_53_bar__plus_00_dot_59_bar__minus_01_dot_11 loc_bar__minus_4_bar__minus_1_bar_2_bar_30)
        (openable Cabinet_bar__minus_01_dot_53_bar__plus_00_dot_59_bar__minus_01_dot_11)
        (receptacleType Cabinet_bar__minus_01_dot_55_bar__plus_02_dot_00_bar__minus_01_dot_11 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_55_bar__plus_02_dot_00_bar__minus_01_dot_11 loc_bar__minus_4_bar_0_bar_2_bar__minus_30)
        (openable Cabinet_bar__minus_01_dot_55_bar__plus_02_dot_00_bar__minus_01_dot_11)
        (receptacleType CounterTop_bar__plus_00_dot_20_bar__plus_01_dot_08_bar__minus_01_dot_51 CounterTopType)
        (receptacleAtLocation CounterTop_bar__plus_00_dot_20_bar__plus_01_dot_08_bar__minus_01_dot_51 loc_bar_4_bar__minus_3_bar_2_bar_30)
        (receptacleType CounterTop_bar__plus_00_dot_97_bar__plus_01_dot_08_bar__plus_00_dot_42 CounterTopType)
        (receptacleAtLocation CounterTop_bar__plus_00_dot_97_bar__plus_01_dot_08_bar__plus_00_dot_42 loc_bar__minus_2_bar_2_bar_1_bar_30)
        (receptacleType Fridge_bar__minus_01_dot_29_bar__plus_00_dot_02_bar__plus_01_dot_83 FridgeType)
        (receptacleAtLocation Fridge_bar__minus_01_dot_29_bar__plus_00_dot_02_bar__plus_01_dot_83 loc_bar_0_bar_7_bar_3_bar_0)
        (openable Fridge_bar__minus_01_dot_29_bar__plus_00_dot_02_bar__plus_01_dot_83)
        (receptacleType Microwave_bar__minus_01_dot_20_bar__plus_01_dot_61_bar__minus_01_dot_28 MicrowaveType)
        (receptacleAtLocation Microwave_bar__minus_01_dot_20_bar__plus_01_dot_61_bar__minus_01_dot_28 loc_bar__minus_4_bar__minus_2_bar_2_bar_0)
        (openable Microwave_bar__minus_01_dot_20_bar__plus_01_dot_61_bar__minus_01_dot_28)
        (receptacleType Sink_bar__plus_00_dot_93_bar__plus_00_dot_94_bar__plus_00_dot_32_bar_SinkBasin SinkBasinType)
        (receptacleAtLocation Sink_bar__plus_00_dot_93_bar__plus_00_dot_94_bar__plus_00_dot_32_bar_SinkBasin loc_bar_4_bar__minus_1_bar_0_bar_30)
        (canContain CabinetType MugType)
        (canContain CabinetType PlateType)
        (canContain CabinetType SaltShakerType)
        (canContain CabinetType SoapBottleType)
        (canContain CounterTopType AppleType)
        (canContain CounterTopType MugType)
        (canContain CounterTopType PlateType)
        (canContain CounterTopType PotatoType)
        (canContain CounterTopType SaltShakerType)
        (canContain CounterTopType SoapBottleType)
        (canContain CounterTopType SpatulaType)
        (canContain CounterTopType SpoonType)
        (canContain CounterTopType TomatoType)
        (canContain FridgeType AppleType)
        (canContain FridgeType MugType)
        (canContain FridgeType PlateType)
        (canContain FridgeType PotatoType)
        (canContain FridgeType TomatoType)
        (canContain MicrowaveType AppleType)
        (canContain MicrowaveType MugType)
        (canContain MicrowaveType PlateType)
        (canContain MicrowaveType PotatoType)
        (canContain MicrowaveType TomatoType)
        (canContain SinkBasinType AppleType)
        (canContain SinkBasinType MugType)
        (canContain SinkBasinType PlateType)
        (canContain SinkBasinType PotatoType)
        (canContain SinkBasinType SpatulaType)
        (canContain SinkBasinType SpoonType)
        (canContain SinkBasinType TomatoType)
        (objectType Potato_bar__plus_02_dot_99_bar__plus_00_dot_21_bar__minus_02_dot_69 PotatoType)
        (inReceptacle Potato_bar__plus_02_dot_99_bar__plus_00_dot_21_bar__minus_02_dot_69 Microwave_bar__minus_01_dot_20_bar__plus_01_dot_61_bar__minus_01_dot_28)
        (objectAtLocation Potato_bar__plus_02_dot_99_bar__plus_00_dot_21_bar__minus_02_dot_69 loc_bar__minus_4_bar__minus_2_bar_2_bar_0)
        (pickupable Potato_bar__plus_02_dot_99_bar__plus_00_dot_21_bar__minus_02_dot_69)
        (cleanable Potato_bar__plus_02_dot_99_bar__plus_00_dot_21_bar__minus_02_dot_69)
        (heatable Potato_bar__plus_02_dot_99_bar__plus_00_dot_21_bar__minus_02_dot_69)
        (coolable Potato_bar__plus_02_dot_99_bar__plus_00_dot_21_bar__minus_02_dot_69)
        (sliceable Potato_bar__plus_02_dot_99_bar__plus_00_dot_21_bar__minus_02_dot_69)
        (objectType SoapBottle_bar__minus_02_dot_13_bar__plus_01_dot_01_bar__minus_01_dot_89 SoapBottleType)
        (inReceptacle SoapBottle_bar__minus_02_dot_13_bar__plus_01_dot_01_bar__minus_01_dot_89 Cabinet_bar__minus_01_dot_53_bar__plus_00_dot_59_bar__minus_01_dot_11)
        (objectAtLocation SoapBottle_bar__minus_02_dot_13_bar__plus_01_dot_01_bar__minus_01_dot_89 loc_bar__minus_4_bar__minus_1_bar_2_bar_30)
        (pickupable SoapBottle_bar__minus_02_dot_13_bar__plus_01_dot_01_bar__minus_01_dot_89)
        (objectType Spoon_bar__plus_00_dot_12_bar__plus_01_dot_52_bar__plus_00_dot_62 SpoonType)
        (inReceptacle Spoon_bar__plus_00_dot_12_bar__plus_01_dot_52_bar__plus_00_dot_62 Sink_bar__plus_00_dot_93_bar__plus_00_dot_94_bar__plus_00_dot_32_bar_SinkBasin)
        (objectAtLocation Spoon_bar__plus_00_dot_12_bar__plus_01_dot_52_bar__plus_00_dot_62 loc_bar_4_bar__minus_1_bar_0_bar_30)
        (pickupable Spoon_bar__plus_00_dot_12_bar__plus_01_dot_52_bar__plus_00_dot_62)
        (cleanable Spoon_bar__plus_00_dot_12_bar__plus_01_dot_52_bar__plus_00_dot_62)
        (objectType Spatula_bar__plus_00_dot_53_bar__plus_00_dot_04_bar__plus_01_dot_49 SpatulaType)
        (inReceptacle Spatula_bar__plus_00_dot_53_bar__plus_00_dot_04_bar__plus_01_dot_49 CounterTop_bar__plus_00_dot_97_bar__plus_01_dot_08_bar__plus_00_dot_42)
        (objectAtLocation Spatula_bar__plus_00_dot_53_bar__plus_00_dot_04_bar__plus_01_dot_49 loc_bar__minus_2_bar_2_bar_1_bar_30)
        (pickupable Spatula_bar__plus_00_dot_53_bar__plus_00_dot_04_bar__plus_01_dot_49)
        (cleanable Spatula_bar__plus_00_dot_53_bar__plus_00_dot_04_bar__plus_01_dot_49)
        (objectType SaltShaker_bar__plus_00_dot_51_bar__plus_01_dot_98_bar__plus_02_dot_76 SaltShakerType)
        (inReceptacle SaltShaker_bar__plus_00_dot_51_bar__plus_01_dot_98_bar__plus_02_dot_76 Cabinet_bar__minus_01_dot_55_bar__plus_02_dot_00_bar__minus_01_dot_11)
        (objectAtLocation SaltShaker_bar__plus_00_dot_51_bar__plus_01_dot_98_bar__plus_02_dot_76 loc_bar__minus_4_bar_0_bar_2_bar__minus_30)
        (pickupable SaltShaker_bar__plus_00_dot_51_bar__plus_01_dot_98_bar__plus_02_dot_76)
        (objectType Apple_bar__minus_00_dot_57_bar__plus_01_dot_08_bar__plus_00_dot_09 AppleType)
        (inReceptacle Apple_bar__minus_00_dot_57_bar__plus_01_dot_08_bar__plus_00_dot_09 Fridge_bar__minus_01_dot_29_bar__plus_00_dot_02_bar__plus_01_dot_83)
        (objectAtLocation Apple_bar__minus_00_dot_57_bar__plus_01_dot_08_bar__plus_00_dot_09 loc_bar_0_bar_7_bar_3_bar_0)
        (pickupable Apple_bar__minus_00_dot_57_bar__plus_01_dot_08_bar__plus_00_dot_09)
        (cleanable Apple_bar__minus_00_dot_57_bar__plus_01_dot_08_bar__plus_00_dot_09)
        (heatable Apple_bar__minus_00_dot_57_bar__plus_01_dot_08_bar__plus_00_dot_09)
        (coolable Apple_bar__minus_00_dot_57_bar__plus_01_dot_08_bar__plus_00_dot_09)
        (sliceable Apple_bar__minus_00_dot_57_bar__plus_01_dot_08_bar__plus_00_dot_09)
        (objectType Mug_bar__plus_02_dot_08_bar__plus_00_dot_69_bar__plus_02_dot_31 MugType)
        (inReceptacle Mug_bar__plus_02_dot_08_bar__plus_00_dot_69_bar__plus_02_dot_31 Fridge_bar__minus_01_dot_29_bar__plus_00_dot_02_bar__plus_01_dot_83)
        (objectAtLocation Mug_bar__plus_02_dot_08_bar__plus_00_dot_69_bar__plus_02_dot_31 loc_bar_0_bar_7_bar_3_bar_0)
        (pickupable Mug_bar__plus_02_dot_08_bar__plus_00_dot_69_bar__plus_02_dot_31)
        (isReceptacleObject Mug_bar__plus_02_dot_08_bar__plus_00_dot_69_bar__plus_02_dot_31)
        (cleanable Mug_bar__plus_02_dot_08_bar__plus_00_dot_69_bar__plus_02_dot_31)
        (heatable Mug_bar__plus_02_dot_08_bar__plus_00_dot_69_bar__plus_02_dot_31)
        (coolable Mug_bar__plus_02_dot_08_bar__plus_00_dot_69_bar__plus_02_dot_31)
        (objectType Plate_bar__plus_00_dot_98_bar__plus_01_dot_42_bar__plus_00_dot_29 PlateType)
        (inReceptacle Plate_bar__plus_00_dot_98_bar__plus_01_dot_42_bar__plus_00_dot_29 Cabinet_bar__plus_01_dot_34_bar__plus_00_dot_59_bar__minus_01_dot_11)
        (objectAtLocation Plate_bar__plus_00_dot_98_bar__plus_01_dot_42_bar__plus_00_dot_29 loc_bar_3_bar__minus_1_bar_2_bar_30)
        (pickupable Plate_bar__plus_00_dot_98_bar__plus_01_dot_42_bar__plus_00_dot_29)
        (isReceptacleObject Plate_bar__plus_00_dot_98_bar__plus_01_dot_42_bar__plus_00_dot_29)
        (cleanable Plate_bar__plus_00_dot_98_bar__plus_01_dot_42_bar__plus_00_dot_29)
        (heatable Plate_bar__plus_00_dot_98_bar__plus_01_dot_42_bar__plus_00_dot_29)
        (coolable Plate_bar__plus_00_dot_98_bar__plus_01_dot_42_bar__plus_00_dot_29)
        (objectType Tomato_bar__minus_00_dot_47_bar__plus_00_dot_53_bar__plus_02_dot_85 TomatoType)
        (inReceptacle Tomato_bar__minus_00_dot_47_bar__plus_00_dot_53_bar__plus_02_dot_85 Sink_bar__plus_00_dot_93_bar__plus_00_dot_94_bar__plus_00_dot_32_bar_SinkBasin)
        (objectAtLocation Tomato_bar__minus_00_dot_47_bar__plus_00_dot_53_bar__plus_02_dot_85 loc_bar_4_bar__minus_1_bar_0_bar_30)
        (pickupable Tomato_bar__minus_00_dot_47_bar__plus_00_dot_53_bar__plus_02_dot_85)
        (cleanable Tomato_bar__minus_00_dot_47_bar__plus_00_dot_53_bar__plus_02_dot_85)
        (heatable Tomato_bar__minus_00_dot_47_bar__plus_00_dot_53_bar__plus_02_dot_85)
        (coolable Tomato_bar__minus_00_dot_47_bar__plus_00_dot_53_bar__plus_02_dot_85)
        (sliceable Tomato_bar__minus_00_dot_47_bar__plus_00_dot_53_bar__plus_02_dot_85)
        )

        (:goal
            (and
                (exists (?r - receptacle)
                    (exists (?o - object)
                        (and
                            (heatable ?o)
                            (objectType ?o PotatoType)
                            (receptacleType ?r SinkBasinType)
                            (isHot ?o)
                            (inReceptacle ?o ?r)
                        )
                    )
                )
            )
        )
    )
    
